import './base.css';
import './chat.css';
